"""Test scenarios: what to request and how to tell a good response.

The paper's four (html, text, json, xml; section 2.2) and the companion
articles' endpoints. `validate` checks one response before load starts, so a
misconfigured proxy can't produce a fast but wrong benchmark.
"""

import json
import string
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass
from html.parser import HTMLParser

from .errors import BadInput, HostbenchError
from .httpclient import Response

XSI = "http://www.w3.org/2001/XMLSchema-instance"
XSD = "http://www.w3.org/2001/XMLSchema"


class InvalidResponse(HostbenchError):
    """A scenario's response does not have the expected shape."""


@dataclass(frozen=True)
class Scenario:
    name: str
    path: str
    content_type: str
    stats_key: str  # the path the test app counts this endpoint under in /__stats
    check_body: Callable[[Response], None]
    description: str
    paper: bool = False  # one of the JCSI 2018 paper's four

    def validate(self, response: Response) -> None:
        """Raise InvalidResponse (one line) unless `response` is what this scenario serves."""
        if response.status != 200:
            raise InvalidResponse(f"{self.name}: {self.path} answered {response.status}, not 200")
        if not response.content_type.startswith(self.content_type):
            raise InvalidResponse(
                f"{self.name}: content type {response.content_type!r}, expected {self.content_type}"
            )
        try:
            self.check_body(response)
        except (ValueError, KeyError, TypeError, ET.ParseError, AssertionError) as e:
            raise InvalidResponse(f"{self.name}: unexpected body ({e})") from None


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


def _check_nonempty(r: Response):
    _check(len(r.body) > 0, "empty body")


def _check_equals(expected: str) -> Callable[[Response], None]:
    def check(r: Response):
        _check(r.text == expected, f"body {r.text[:40]!r}, expected {expected!r}")

    return check


_ALL = [
    Scenario("html", "/html", "text/html", "/html", _check_html,
             "Razor view: 100 buttons, 10 selects of 10 options", paper=True),
    Scenario("text", "/text", "text/plain", "/text", _check_text,
             "plain text: the Latin letters and digits", paper=True),
    Scenario("json", "/json", "application/json", "/json", _check_json,
             "SimpleClass as JSON (Listing 2)", paper=True),
    Scenario("xml", "/xml", "application/xml", "/xml", _check_xml,
             "SimpleClass through XmlSerializer (Listing 3)", paper=True),
    Scenario("values", "/api/values/5", "text/plain", "/api/values", _check_equals("value"),
             "Go vs .NET 2017: GET /api/values/{id}"),
    Scenario("api-test", "/api/test", "text/plain", "/api/test", _check_nonempty,
             "Linux proxies 2021: 'Test {UTC now}'"),
    Scenario("testapi", "/api/testapi", "application/json", "/api/testapi", _check_nonempty,
             "Web API self-host 2012: three Foo objects"),
    Scenario("plaintext", "/plaintext", "text/plain", "/plaintext",
             _check_equals("Hello, World!"), "TechEmpower plaintext (middleware, no MVC)"),
    Scenario("hello-json", "/hello-json", "application/json", "/hello-json", _check_nonempty,
             "TechEmpower JSON (middleware, no MVC)"),
]  # fmt: skip

SCENARIOS: dict[str, Scenario] = {s.name: s for s in _ALL}
PAPER_SCENARIOS = [s.name for s in _ALL if s.paper]


def get_scenario(name: str) -> Scenario:
    try:
        return SCENARIOS[name]
    except KeyError:
        raise BadInput(f"unknown scenario {name!r}; allowed: {', '.join(SCENARIOS)}") from None
