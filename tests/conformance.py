"""An implementation held to its protocol by structure (tests/test_protocols.py,
tests/test_where.py): every attribute, method and property the protocol declares, each of the
same kind and with the same parameters."""

import inspect


def _members(protocol) -> dict[str, object]:
    """A protocol's methods and properties (its own, and __enter__/__exit__), by name."""
    return {
        name: member
        for name, member in vars(protocol).items()
        if (callable(member) or isinstance(member, property))
        and (not name.startswith("_") or name in ("__enter__", "__exit__"))
    }


def _parameters(member) -> list[str]:
    function = member.fget if isinstance(member, property) else member
    return list(inspect.signature(function).parameters)


def unmet(protocol, instance) -> list[str]:
    """What `instance` lacks of `protocol`: an attribute it declares, a method or property,
    or one with other parameters or of the other kind (property or method)."""
    wrong = [f"no attribute {name}" for name in protocol.__annotations__
             if not hasattr(instance, name)]  # fmt: skip
    for name, wanted in _members(protocol).items():
        found = inspect.getattr_static(instance, name, None)
        if found is None:
            wrong.append(f"no {name}")
        elif isinstance(found, property) != isinstance(wanted, property):
            wrong.append(f"{name}: a property in one, a method in the other")
        elif _parameters(found) != _parameters(wanted):
            wrong.append(f"{name}{_parameters(found)}, the protocol's {_parameters(wanted)}")
    return wrong
