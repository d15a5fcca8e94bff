"""A program a mode starts is declared once (hostbench/programs PROGRAMS) and every list of
programs derives from there: the reports' proxies, the params keys a program owns (and the
docs' rows of them), what a mode may ask of its proxy, and the Debian packages the install
script, the Ansible playbook and the Dockerfile must install. The last test declares a proxy
in one place, a test's class registered in PROGRAMS, and sees the others follow."""

import re
import typing
from dataclasses import replace
from pathlib import PurePosixPath

import pytest
import yaml

from hostbench.__main__ import main
from hostbench.analysis import tables
from hostbench.catalog import MODES, linux_modes, where_modes_run
from hostbench.errors import BadInput
from hostbench.params import LaunchOptions, StudyParams, declared, markdown
from hostbench.params.command_line import parse_settings
from hostbench.params.rules import Key, Rule
from hostbench.paths import ROOT
from hostbench.programs import PROGRAMS, LaunchSettings, Proxy, Setting, Setup, programs_of, proxies

GOOD = {"modes": ["kestrel"], "scenarios": ["text"], "tools": ["k6"], "concurrency": [4],
        "duration_s": 5, "warmup_s": 0, "repetitions": 1}  # fmt: skip


def script_packages() -> set[str]:
    """The Debian packages scripts/install-system-packages.sh installs: its `pkgs=(...)`."""
    text = (ROOT / "scripts" / "install-system-packages.sh").read_text()
    return set(re.search(r"^pkgs=\(([^)]*)\)", text, re.M).group(1).split())


def playbook_packages() -> set[str]:
    """What deploy/provision.yml's apt tasks install on the server host, where the programs
    run (its plays for `server`, alone or with other groups)."""
    names = set()
    for play in yaml.safe_load((ROOT / "deploy" / "provision.yml").read_text()):
        if "server" in play["hosts"].split(":"):
            for task in play["tasks"]:
                name = task.get("ansible.builtin.apt", {}).get("name", [])
                names.update([name] if isinstance(name, str) else name)
    return names


def dockerfile_packages() -> set[str]:
    """Every package an `apt-get install` of the Dockerfile names (its options aside)."""
    lines = (ROOT / "Dockerfile").read_text().splitlines()
    text = " ".join(line.rstrip("\\") for line in lines if not line.lstrip().startswith("#"))
    commands = re.findall(r"apt-get install ([^&]*)", text)
    return {word for command in commands for word in command.split() if not word.startswith("-")}


# Where this machine, an ssh host and the image get the programs' Debian packages.
INSTALLERS = {
    "scripts/install-system-packages.sh": script_packages,
    "deploy/provision.yml": playbook_packages,
    "Dockerfile": dockerfile_packages,
}


def needed_packages() -> list[str]:
    """The Debian packages the programs come from, as they declare them."""
    return [p.debian_package for p in PROGRAMS.values() if p.debian_package]


def lacking() -> list[str]:
    """What the files lack, one "<file> lacks <package>" for each package a program declares
    that a file does not install."""
    return [f"{name} lacks {package}" for name, installed in INSTALLERS.items()
            for package in needed_packages() if package not in installed()]  # fmt: skip


def test_the_install_script_the_playbook_and_the_dockerfile_install_every_programs_package():
    # Every program comes from a Debian package or from what builds it here; those that name a
    # package are what the three files must install.
    assert all(bool(p.debian_package) != bool(p.built_by) for p in PROGRAMS.values())
    assert needed_packages() and lacking() == [], "; ".join(lacking())


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


class Haproxy(Proxy):
    """A proxy declared in this test only: as a new proxy's module would declare it."""

    name = tool = "haproxy"
    debian_package = "haproxy"
    log = "haproxy.log"
    settings = (
        Setting(Key("haproxy_threads", None, "threads",
                    "HAProxy's threads; null: one per core it may run on.",
                    Rule("int", minimum=1), null="", also="with a haproxy mode"),
                shapes="haproxy"),
    )  # fmt: skip

    def configs(self, setup, folder, place):
        threads = setup.opts.program_settings.get("haproxy_threads") or 1
        return {"haproxy.cfg": f"global\n    nbthread {threads}\n# to {setup.upstream}\n"}

    def argv(self, exe, setup, folder):
        return [exe, "-f", str(folder / "haproxy.cfg")]


def test_a_proxy_declared_in_one_place_is_in_every_list(monkeypatch, capsys):
    monkeypatch.setitem(PROGRAMS, "haproxy", Haproxy())
    mode = replace(MODES["caddy"], id="haproxy", label="Kestrel + HAProxy (TCP)",
                   summary="HAProxy in front of Kestrel", proxy="haproxy",
                   color="#000000")  # fmt: skip
    monkeypatch.setitem(MODES, mode.id, mode)  # a mode declared as the catalog's are

    # The modes: `python -m hostbench modes`, the list of Linux modes, the docs' table.
    assert main(["modes"]) == 0
    assert "haproxy            runs here     HAProxy in front of Kestrel" in capsys.readouterr().out
    assert "haproxy" in linux_modes()
    assert "| `haproxy` | `TestApp` behind `haproxy` (TCP) |" in where_modes_run()

    # Its params key: in the docs, set in a params file or with --set, refused where it
    # would change nothing, and read by the program it belongs to.
    row = ("| `haproxy_threads` | measured when set | int or null | `null` | threads | "
           "HAProxy's threads; null: one per core it may run on. | >= 1; with a haproxy "
           "mode |")  # fmt: skip
    assert row in markdown().splitlines()
    assert parse_settings(["haproxy_threads=2"]) == {"haproxy_threads": (2, "2")}
    params = StudyParams.from_dict({**GOOD, "modes": ["kestrel", "haproxy"], "haproxy_threads": 2})
    assert params.options.program_settings["haproxy_threads"] == 2
    assert params.to_dict()["haproxy_threads"] == 2
    with pytest.raises(BadInput) as err:
        StudyParams.from_dict({**GOOD, "haproxy_threads": 2})
    assert str(err.value) == (
        "params key 'haproxy_threads' shapes haproxy, but no such mode is in ['kestrel']"
    )
    server, proxy = programs_of(mode)  # what the harness launches for the mode
    assert (server.name, proxy.name) == ("TestApp", "haproxy")
    setup = Setup(mode, params.options, "127.0.0.1:1", upstream="127.0.0.1:2")
    assert "nbthread 2" in proxy.configs(setup, PurePosixPath("/x"), None)["haproxy.cfg"]
    assert LaunchOptions().program_settings["haproxy_threads"] is None

    # The reports' proxies, and the packages the install script, playbook and image install.
    assert tables.proxy_versions({"tools": {"haproxy": "haproxy/2.8"}}) == "haproxy/2.8"
    assert proxy.package == "apt-get install haproxy (done by `make setup` as root)"
    assert "haproxy" in needed_packages()
    assert "; ".join(lacking()) == (
        "scripts/install-system-packages.sh lacks haproxy; deploy/provision.yml lacks haproxy; "
        "Dockerfile lacks haproxy"
    )


def test_the_params_launch_options_are_what_the_programs_read():
    # The programs declare what they read of the params (LaunchSettings), importing none of
    # them: LaunchOptions must hold each of those, of the type declared.
    declared = typing.get_type_hints(LaunchSettings)
    held = typing.get_type_hints(LaunchOptions)
    assert {name: held.get(name) for name in declared} == declared
