"""How to tell a good response of each scenario: the rules its catalog entry names.

Each scenario in hostbench.catalog declares its body (`Body`: a rule and, for `equals`, the
exact body); this module applies the rule. `validate` checks one response before load starts,
so a misconfigured proxy can't produce a fast but wrong benchmark.
"""

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from datetime import datetime
from html.parser import HTMLParser

from ...catalog import Scenario
from ...errors import HostbenchError
from ..launch.web import Response

XSI = "http://www.w3.org/2001/XMLSchema-instance"
XSD = "http://www.w3.org/2001/XMLSchema"


class InvalidResponse(HostbenchError):
    """A scenario's response does not have the expected shape."""


def validate(scenario: Scenario, response: Response) -> None:
    """Raise InvalidResponse (one line) unless `response` is what `scenario` serves."""
    if response.status != 200:
        raise InvalidResponse(f"{scenario.id}: {scenario.path} answered {response.status}, not 200")
    if not response.content_type.startswith(scenario.content_type):
        raise InvalidResponse(
            f"{scenario.id}: content type {response.content_type!r}, "
            f"expected {scenario.content_type}"
        )
    check_body(scenario, response.body)


def check_body(scenario: Scenario, body: bytes) -> None:
    """Raise InvalidResponse (one line) unless `body` is what the scenario's catalog entry
    declares."""
    try:
        BODY_RULES[scenario.body.rule](body, scenario.body.expected)
    except (ValueError, KeyError, TypeError, ET.ParseError, AssertionError) as e:
        raise InvalidResponse(f"{scenario.id}: unexpected body ({e})") from None


def _text(body: bytes) -> str:
    return body.decode("utf-8", errors="replace")


def _check(condition: bool, what: str):
    if not condition:
        raise ValueError(what)


class _FormCounter(HTMLParser):
    def __init__(self):
        super().__init__()
        self.buttons = 0
        self.options_per_select: list[int] = []

    def handle_starttag(self, tag, attrs):
        if tag == "button":
            self.buttons += 1
        elif tag == "select":
            self.options_per_select.append(0)
        elif tag == "option" and self.options_per_select:
            self.options_per_select[-1] += 1


def _form(body: bytes, expected: str):
    # The paper's Razor view: 100 buttons and 10 select lists of 10 options each.
    counter = _FormCounter()
    counter.feed(_text(body))
    _check(counter.buttons == 100, f"{counter.buttons} buttons, expected 100")
    _check(
        counter.options_per_select == [10] * 10,
        f"selects with options {counter.options_per_select}, expected 10 selects of 10",
    )


def _simple_class_json(body: bytes, expected: str):
    # The paper's Listing 2.
    doc = json.loads(body)
    _check(list(doc) == ["id", "stringValue", "intValue", "listOfInts"], f"keys {list(doc)}")
    _check(doc["stringValue"] == doc["id"][:8], "stringValue is not the id's first 8 characters")
    _check(isinstance(doc["intValue"], int), "intValue is not an int")
    ints = doc["listOfInts"]
    _check(len(ints) == 10 and all(isinstance(i, int) for i in ints), "listOfInts not 10 ints")


def _simple_class_xml(body: bytes, expected: str):
    # The paper's Listing 3, through XmlSerializer.
    root = ET.fromstring(body)
    _check(root.tag == "SimpleClass", f"root <{root.tag}>, expected <SimpleClass>")
    children = [c.tag for c in root]
    _check(children == ["Id", "StringValue", "IntValue", "ListOfInts"], f"elements {children}")
    _check(len(root.find("ListOfInts")) == 10, "ListOfInts does not hold 10 <int>")
    text = _text(body)
    _check(f'xmlns:xsi="{XSI}"' in text and f'xmlns:xsd="{XSD}"' in text, "xsi/xsd missing")


def _page(body: bytes, expected: str):
    # The 2017 article's second test: a home page, a carousel and columns of links inside a
    # layout (the same page from Razor and from Go's templates; tests/test_goservers.py
    # compares them byte for byte).
    text = _text(body)
    _check("carousel" in text and "</html>" in text.lower(), "not the home page inside its layout")


def _nonempty(body: bytes, expected: str):
    _check(len(body) > 0, "empty body")


def _test_and_stamp(body: bytes, expected: str):
    # The 2021 article's `$"Test {DateTime.UtcNow}"`: .NET's default DateTime text, which the
    # test app's invariant culture writes as "MM/dd/yyyy HH:mm:ss"; or, with the test app's
    # --api-test-body trace-id, its postscript's `Activity.Current?.Id ?? TraceIdentifier`.
    text = _text(body)
    _check(text.startswith("Test "), f"body {text[:40]!r} does not start with 'Test '")
    stamp = text.removeprefix("Test ")
    if TRACE_ID.fullmatch(stamp):
        return
    try:
        datetime.strptime(stamp, DOTNET_DEFAULT_DATETIME)
    except ValueError:
        _check(False, f"body {text[:40]!r} is not 'Test ' and .NET's default DateTime text "
                      "or a request's trace id")  # fmt: skip


# A request's trace id as .NET writes it: a W3C Activity id ("00-<trace>-<span>-<flags>"), or,
# with no Activity, Kestrel's TraceIdentifier ("<connection id>:<request number, 8 hex>").
TRACE_ID = re.compile(r"00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}|[0-9A-Z]+:[0-9A-F]{8}")
# .NET's DateTime.ToString() under the invariant culture, as strptime reads it.
DOTNET_DEFAULT_DATETIME = "%m/%d/%Y %H:%M:%S"


def _equals(body: bytes, expected: str):
    text = _text(body)
    _check(text == expected, f"body {text[:40]!r}, expected {expected[:40]!r}")


# Each rule a catalog scenario's Body names, applied to its body (and the Body's `expected`).
BODY_RULES: dict[str, Callable[[bytes, str], None]] = {
    "equals": _equals,
    "nonempty": _nonempty,
    "form": _form,
    "simple-class-json": _simple_class_json,
    "simple-class-xml": _simple_class_xml,
    "page": _page,
    "test-and-stamp": _test_and_stamp,
}
