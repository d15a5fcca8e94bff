"""How to tell a good response of each scenario (the scenarios are in hostbench.catalog).

`validate` checks one response before load starts, so a misconfigured proxy
can't produce a fast but wrong benchmark.
"""

import json
import string
import xml.etree.ElementTree as ET
from collections.abc import Callable
from datetime import datetime
from html.parser import HTMLParser

from ..catalog import Scenario
from ..errors import HostbenchError
from .web import Response

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
    try:
        BODY_CHECKS[scenario.id](response)
    except (ValueError, KeyError, TypeError, ET.ParseError, AssertionError) as e:
        raise InvalidResponse(f"{scenario.id}: unexpected body ({e})") from None


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


def _check_html(r: Response):
    counter = _FormCounter()
    counter.feed(r.text)
    _check(counter.buttons == 100, f"{counter.buttons} buttons, expected 100")
    _check(
        counter.options_per_select == [10] * 10,
        f"selects with options {counter.options_per_select}, expected 10 selects of 10",
    )


TEXT_BODY = string.ascii_lowercase + string.ascii_uppercase + string.digits


def _check_text(r: Response):
    _check(r.text == TEXT_BODY, f"body {r.text[:40]!r}..., expected the Latin letters and digits")


def _check_json(r: Response):
    doc = json.loads(r.body)
    _check(list(doc) == ["id", "stringValue", "intValue", "listOfInts"], f"keys {list(doc)}")
    _check(doc["stringValue"] == doc["id"][:8], "stringValue is not the id's first 8 characters")
    _check(isinstance(doc["intValue"], int), "intValue is not an int")
    ints = doc["listOfInts"]
    _check(len(ints) == 10 and all(isinstance(i, int) for i in ints), "listOfInts not 10 ints")


def _check_xml(r: Response):
    root = ET.fromstring(r.body)
    _check(root.tag == "SimpleClass", f"root <{root.tag}>, expected <SimpleClass>")
    children = [c.tag for c in root]
    _check(children == ["Id", "StringValue", "IntValue", "ListOfInts"], f"elements {children}")
    _check(len(root.find("ListOfInts")) == 10, "ListOfInts does not hold 10 <int>")
    _check(f'xmlns:xsi="{XSI}"' in r.text and f'xmlns:xsd="{XSD}"' in r.text, "xsi/xsd missing")


def _check_templates(r: Response):
    # The 2017 article's second test: a layout around a list of items (the same page from
    # Razor and from Go's templates; tests/test_goservers.py compares them byte for byte).
    _check("<li" in r.text and "</html>" in r.text.lower(), "no list items in a full page")


def _check_nonempty(r: Response):
    _check(len(r.body) > 0, "empty body")


def _check_api_test(r: Response):
    # The 2021 article's `$"Test {DateTime.UtcNow}"`: .NET's default DateTime text, which the
    # test app's invariant culture writes as "MM/dd/yyyy HH:mm:ss".
    text = r.text
    try:
        datetime.strptime(text.removeprefix("Test "), DOTNET_DEFAULT_DATETIME)
    except ValueError:
        _check(False, f"body {text[:40]!r} is not 'Test ' and .NET's default DateTime text")
    _check(text.startswith("Test "), f"body {text[:40]!r} does not start with 'Test '")


# .NET's DateTime.ToString() under the invariant culture, as strptime reads it.
DOTNET_DEFAULT_DATETIME = "%m/%d/%Y %H:%M:%S"


def _check_equals(expected: str) -> Callable[[Response], None]:
    def check(r: Response):
        _check(r.text == expected, f"body {r.text[:40]!r}, expected {expected!r}")

    return check


# How each catalog scenario's body is checked.
BODY_CHECKS: dict[str, Callable[[Response], None]] = {
    "html": _check_html,
    "text": _check_text,
    "json": _check_json,
    "xml": _check_xml,
    "values": _check_equals("value"),
    "api-test": _check_api_test,
    "testapi": _check_nonempty,
    "plaintext": _check_equals("Hello, World!"),
    "hello-json": _check_nonempty,
    "values-minimal": _check_equals("value"),
    "templates": _check_templates,
}
