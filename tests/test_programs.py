"""A program a mode starts is declared once (hostbench/programs PROGRAMS) and every list of
programs derives from there: the reports' proxies, the params keys a program owns (and the
docs' rows of them), what a mode may ask of its proxy, and the Debian packages the install
script, the Ansible playbook and the Dockerfile install (all three read deploy/packages.yml,
generated from the declarations). A test declares a proxy in one place, a test's class
registered in PROGRAMS, and sees the others follow."""

import re
import shutil
import subprocess
import typing
from dataclasses import replace
from pathlib import Path, PurePosixPath

import pytest
import yaml

from hostbench import packages
from hostbench.__main__ import main
from hostbench.analysis import tables
from hostbench.catalog import MODES, linux_modes, where_modes_run
from hostbench.docs import GENERATED
from hostbench.errors import BadInput
from hostbench.load import TOOLS
from hostbench.params import LaunchOptions, StudyParams, declared, markdown
from hostbench.params.command_line import parse_settings
from hostbench.params.rules import Key, Rule
from hostbench.paths import ROOT
from hostbench.programs import PROGRAMS, LaunchSettings, Proxy, Setting, Setup, programs_of, proxies

GOOD = {"modes": ["kestrel"], "scenarios": ["text"], "tools": ["k6"], "concurrency": [4],
        "duration_s": 5, "warmup_s": 0, "repetitions": 1}  # fmt: skip


# What installs the programs' and load tools' Debian packages: on this machine, on an ssh
# host, in the image. None holds a list of its own: each reads deploy/packages.yml.
INSTALLERS = ("scripts/install-system-packages.sh", "deploy/provision.yml", "Dockerfile")


def checkout_with(tree: Path, listed: str) -> Path:
    """A copy of the installers, byte for byte, and their list reader in `tree`, beside
    `listed` as deploy/packages.yml: what a checkout holds after `python -m hostbench docs`."""
    for name in (*INSTALLERS, "scripts/packages.sh"):
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, tree / name)
    (tree / packages.FILE).write_text(listed)
    return tree


def listed_by(tree: Path, *groups: str) -> set[str]:
    """The packages of `groups` in `tree`'s deploy/packages.yml, read as YAML (what
    scripts/packages.sh prints for them: test_the_shell_reads_the_list_as_yaml_does)."""
    listed = yaml.safe_load((tree / packages.FILE).read_text())
    return {name for group in groups for name in listed[f"{group}_packages"]}


def script_packages(tree: Path) -> set[str]:
    """What scripts/install-system-packages.sh installs: the groups it has scripts/packages.sh
    print (what its --list prints: test_the_shell_reads_the_list_as_yaml_does)."""
    text = (tree / "scripts" / "install-system-packages.sh").read_text()
    asked = re.search(r'^listed=\$\("\$here/packages\.sh" ([a-z ]+)\)$', text, re.M)
    return listed_by(tree, *asked[1].split())


def playbook_packages(tree: Path) -> set[str]:
    """What deploy/provision.yml's apt tasks install on the server host, where the programs
    run (its plays for `server`, alone or with other groups), its variables read from its
    vars_files as Ansible reads them."""
    names = set()
    for play in yaml.safe_load((tree / "deploy" / "provision.yml").read_text()):
        if "server" not in play["hosts"].split(":"):
            continue
        variables = {}
        for name in play.get("vars_files", []):
            variables.update(yaml.safe_load((tree / "deploy" / name).read_text()))
        for task in play["tasks"]:
            name = task.get("ansible.builtin.apt", {}).get("name", [])
            variable = re.fullmatch(r"\{\{ (\w+) \}\}", name) if isinstance(name, str) else None
            names.update(variables[variable[1]] if variable else [name] if isinstance(name, str)
                         else name)  # fmt: skip
    return names


def dockerfile_packages(tree: Path) -> set[str]:
    """Every package an `apt-get install` of the Dockerfile names (its options aside), its
    `$(scripts/packages.sh GROUP...)` read as the build reads it."""
    lines = (tree / "Dockerfile").read_text().splitlines()
    text = " ".join(line.rstrip("\\") for line in lines if not line.lstrip().startswith("#"))
    names = set()
    for command in re.findall(r"apt-get install ([^&]*)", text):
        for groups in re.findall(r"\$\(scripts/packages\.sh ([^)]*)\)", command):
            names |= listed_by(tree, *groups.split())
        words = re.sub(r"\$\([^)]*\)", " ", command).split()
        names.update(word for word in words if not word.startswith("-"))
    return names


def needed_packages() -> list[str]:
    """The Debian packages the programs come from, as they declare them."""
    return [p.debian_package for p in PROGRAMS.values() if p.debian_package]


def lacking(tree: Path = ROOT) -> list[str]:
    """What the installers in `tree` lack, one "<file> lacks <package>" for each package a
    program declares that a file does not install."""
    installed = dict(zip(INSTALLERS, (script_packages(tree), playbook_packages(tree),
                                      dockerfile_packages(tree)), strict=True))  # fmt: skip
    return [f"{name} lacks {package}" for name in INSTALLERS
            for package in needed_packages() if package not in installed[name]]  # fmt: skip


def test_the_install_script_the_playbook_and_the_dockerfile_install_every_programs_package():
    # Every program comes from a Debian package or from what builds it here; those that name a
    # package are what the three files must install.
    assert all(bool(p.debian_package) != bool(p.built_by) for p in PROGRAMS.values())
    assert needed_packages() and lacking() == [], "; ".join(lacking())
    # The list they read is the one the declarations make (`python -m hostbench docs`).
    assert (ROOT / packages.FILE).read_text() == GENERATED[packages.FILE]()
    # The load tools' packages, on this machine and the load host; the harness's, here only.
    tools = {t.debian_package for t in TOOLS.values() if t.debian_package}
    assert tools == {"wrk", "apache2-utils"} == listed_by(ROOT, "loadgen")
    assert tools | set(packages.HARNESS) <= script_packages(ROOT)
    assert not set(packages.HARNESS) & dockerfile_packages(ROOT)


@pytest.mark.live
def test_the_shell_reads_the_list_as_yaml_does(tmp_path, monkeypatch):
    """scripts/packages.sh and the install script's --list print what the list says, read as
    YAML: on the committed list, and on one a new program's package is added to."""
    monkeypatch.setitem(PROGRAMS, StandInProxy.name, StandInProxy())
    for tree in (ROOT, checkout_with(tmp_path, GENERATED[packages.FILE]())):
        for group in packages.groups():
            out = _bash(tree / "scripts" / "packages.sh", group)
            assert out.returncode == 0 and out.stdout.split() == packages_of(tree, group), group
        out = _bash(tree / "scripts" / "install-system-packages.sh", "--list")
        assert out.returncode == 0 and set(out.stdout.split()) == script_packages(tree)
    assert StandInProxy.name in script_packages(tmp_path)
    # Asked for a group it has not: one line, naming the groups.
    out = _bash(ROOT / "scripts" / "packages.sh", "servers")
    assert out.returncode == 2 and out.stdout == "" and out.stderr.count("\n") == 1
    assert out.stderr.endswith(f"no group 'servers' in {ROOT / packages.FILE}; the groups: "
                               f"{' '.join(packages.groups())}\n")  # fmt: skip


def _bash(script: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(script), *args], capture_output=True, text=True)


def packages_of(tree: Path, group: str) -> list[str]:
    """One group's packages in `tree`'s list, in its order."""
    return yaml.safe_load((tree / packages.FILE).read_text())[f"{group}_packages"]


def test_the_reports_proxies_and_the_params_keys_are_the_declared_ones():
    # The reports' order is the declarations' (PROGRAMS), whatever proxies they add.
    declared_at = [list(PROGRAMS).index(p.name) for p in proxies()]
    assert declared_at == sorted(declared_at)
    assert {"nginx", "caddy", "yarp"} <= {p.name for p in proxies()}
    env = {"tools": {"yarp": "yarp/2.3.0", "k6": "k6 v1", "nginx": "nginx/1.22.1"}}
    assert tables.proxy_versions(env) == "nginx/1.22.1; yarp/2.3.0"
    # nginx's keys, by the names committed runs recorded, after the general keys.
    assert [k.name for k in declared()][-2:] == ["nginx_keepalive_pool", "nginx_workers"]
    assert [s.key.name for s in PROGRAMS["nginx"].settings] == [
        "nginx_keepalive_pool",
        "nginx_workers",
    ]


def test_each_mode_asks_its_proxy_only_for_a_hop_it_can_make():
    for mode in MODES.values():
        if mode.proxy:
            assert PROGRAMS[mode.proxy].fronts(mode), mode.id
            assert [p.name for p in programs_of(mode)] == [mode.server, mode.proxy]
    uds = replace(MODES["yarp"], id="yarp-uds", unix_socket=True)
    with pytest.raises(BadInput, match="^mode 'yarp-uds': yarp cannot front the app over a Unix"):
        programs_of(uds)
    with pytest.raises(BadInput, match="caddy cannot front the app with an upstream pool$"):
        programs_of(replace(MODES["caddy"], keepalive=8))


class StandInProxy(Proxy):
    """A proxy declared in this test only, as a new proxy's module would declare it (HAProxy's
    settings), under names no real program, package, key or mode will take."""

    name = tool = debian_package = "standin-haproxy"
    log = "standin-haproxy.log"
    settings = (
        Setting(Key("standin_haproxy_threads", None, "threads",
                    "HAProxy's threads; null: one per core it may run on.",
                    Rule("int", minimum=1), null="", also="with a standin-haproxy mode"),
                shapes="standin-haproxy"),
    )  # fmt: skip

    def configs(self, setup, folder, place):
        threads = setup.opts.program_settings.get("standin_haproxy_threads") or 1
        return {"haproxy.cfg": f"global\n    nbthread {threads}\n# to {setup.upstream}\n"}

    def argv(self, exe, setup, folder):
        return [exe, "-f", str(folder / "haproxy.cfg")]


def test_a_proxy_declared_in_one_place_is_in_every_list(monkeypatch, capsys, tmp_path):
    name = StandInProxy.name
    assert name not in PROGRAMS and name not in MODES  # the stand-in takes no real one's place
    monkeypatch.setitem(PROGRAMS, name, StandInProxy())
    mode = replace(MODES["caddy"], id=name, label="Kestrel + HAProxy (TCP)",
                   summary="HAProxy in front of Kestrel", proxy=name,
                   color="#000000")  # fmt: skip
    monkeypatch.setitem(MODES, mode.id, mode)  # a mode declared as the catalog's are

    # The modes: `python -m hostbench modes`, the list of Linux modes, the docs' table.
    assert main(["modes"]) == 0
    assert re.search(rf"^{name} +runs here +HAProxy in front of Kestrel$", capsys.readouterr().out,
                     re.M)  # fmt: skip
    assert name in linux_modes()
    assert f"| `{name}` | `TestApp` behind `{name}` (TCP) |" in where_modes_run()

    # Its params key: in the docs, set in a params file or with --set, refused where it
    # would change nothing, and read by the program it belongs to.
    key = "standin_haproxy_threads"
    row = (f"| `{key}` | measured when set | int or null | `null` | threads | "
           f"HAProxy's threads; null: one per core it may run on. | >= 1; with a {name} "
           "mode |")  # fmt: skip
    assert row in markdown().splitlines()
    assert parse_settings([f"{key}=2"]) == {key: (2, "2")}
    params = StudyParams.from_dict({**GOOD, "modes": ["kestrel", name], key: 2})
    assert params.options.program_settings[key] == 2
    assert params.to_dict()[key] == 2
    with pytest.raises(BadInput) as err:
        StudyParams.from_dict({**GOOD, key: 2})
    assert str(err.value) == f"params key '{key}' shapes {name}, but no such mode is in ['kestrel']"
    server, proxy = programs_of(mode)  # what the harness launches for the mode
    assert (server.name, proxy.name) == ("TestApp", name)
    setup = Setup(mode, params.options, "127.0.0.1:1", upstream="127.0.0.1:2")
    assert "nbthread 2" in proxy.configs(setup, PurePosixPath("/x"), None)["haproxy.cfg"]
    assert LaunchOptions().program_settings[key] is None

    # The reports' proxies.
    assert tables.proxy_versions({"tools": {name: "haproxy/2.8"}}) == "haproxy/2.8"
    assert proxy.package == f"apt-get install {name} (done by `make setup` as root)"

    # Its package: in the list every installer reads, once `python -m hostbench docs` writes
    # it (the committed one, written before, lacks it), with no installer edited.
    listed = GENERATED[packages.FILE]()
    assert f"server_packages: [caddy, nginx, openssl, {name}]" in listed.splitlines()
    assert "; ".join(lacking()) == "; ".join(f"{f} lacks {name}" for f in INSTALLERS)
    assert lacking(checkout_with(tmp_path, listed)) == []


def test_the_params_launch_options_are_what_the_programs_read():
    # The programs declare what they read of the params (LaunchSettings), importing none of
    # them: LaunchOptions must hold each of those, of the type declared.
    declared = typing.get_type_hints(LaunchSettings)
    held = typing.get_type_hints(LaunchOptions)
    assert {name: held.get(name) for name in declared} == declared
