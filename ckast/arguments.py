"""The Python API's arguments: how a message names one, and the check of what each is given.

A message about an argument names it as its caller does (`argument`): the Python keyword (`problems_file`,
`datatype`) when the API is called, the option (`--problems`, `--datatype`) while a command of the `ckast`
command line runs. Modules raising such an error name the Python argument and let `argument` say it.

`checked(name=KIND, ...)` checks the arguments of an API function before it runs, by kind (`KINDS`): a path, a
name, a positive count, ... or one or several of them, or an instance of one of ckast's classes. A wrong one is
an `ArgumentError` naming the argument, what it takes and what it was given, so no wrong-typed call reaches
ckast's work (and fails there with a bare TypeError or AttributeError).
"""

from __future__ import annotations

import functools
import inspect
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, TypeVar

from ckast.errors import CkastError

OPTIONS = {"problems": "--problem", "problems_file": "--problems", "datatypes": "--datatype", "ndims": "--ndim",
           "variants": "--variant", "configs": "--config", "workload": "--for", "models": "--model",
           "data": "--data", "library": "--library", "output": "-o"}
"""Python argument -> the command's option, where it is not `--` and the argument's name with dashes."""


def argument(name: str) -> str:
    """The Python argument `name` as the caller names it: itself, or within a `ckast` command its option
    (`OPTIONS`)."""
    if not in_command():
        return name
    return OPTIONS.get(name, "--" + name.replace("_", "-"))


def in_command() -> bool:
    """Whether a command of ckast's command line is running (the root of click's current context is one)."""
    click = sys.modules.get("click")  # not imported: no command runs
    context = click.get_current_context(silent=True) if click is not None else None
    callback = context.find_root().command.callback if context is not None else None
    return callback is not None and callback.__module__.split(".")[:2] == ["ckast", "cli"]


class ArgumentError(CkastError, TypeError, ValueError):
    """An API function given a value of the wrong type or out of range for an argument: `name` names it."""

    def __init__(self, name: str, message: str) -> None:
        self.name = name
        super().__init__(f"{argument(name)}: {message}")


def _path(value: Any) -> bool:
    return (isinstance(value, str) and value != "") or (isinstance(value, os.PathLike)
                                                        and isinstance(os.fspath(value), str))


def _name(value: Any) -> bool:
    return isinstance(value, str) and value != ""


def _count(value: Any) -> bool:
    return type(value) is int and value >= 1


def _natural(value: Any) -> bool:
    return type(value) is int and value >= 0


def _number(value: Any) -> bool:
    return type(value) in (int, float) and value == value


def _problem(value: Any) -> bool:
    return _name(value) or (isinstance(value, Mapping) and all(isinstance(k, str) for k in value))


def _several(one: Callable[[Any], bool]) -> Callable[[Any], bool]:
    """One value `one` accepts, or an iterable (not a string or mapping) of them."""
    def test(value: Any) -> bool:
        if one(value):
            return True
        if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
            return False
        return all(one(v) for v in value)
    return test


def _optional(test: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda value: value is None or test(value)


KINDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "path": (_path, "a path (a non-empty str or an os.PathLike)"),
    "paths": (_several(_path), "a path or an iterable of paths (non-empty str or os.PathLike)"),
    "name": (_name, "a non-empty str"),
    "names": (_several(_name), "a name or an iterable of names (non-empty str)"),
    "count": (_count, "a positive int"),
    "counts": (_several(_count), "a positive int or an iterable of them"),
    "natural": (_natural, "an int of at least 0"),
    "int": (lambda v: type(v) is int, "an int"),
    "number": (_number, "a number (int or float)"),
    "flag": (lambda v: type(v) is bool, "True or False"),
    "callable": (callable, "a callable"),
    "problems": (_several(_problem), "a problem (a str like \"M=64,N=64,K=64\" or a mapping of field names) or an "
                                     "iterable of them"),
}
"""An argument's kind -> its test and what it takes, as a message says it; `optional <kind>` also takes None."""

F = TypeVar("F", bound=Callable[..., Any])


def _kind(kind: str) -> tuple[Callable[[Any], bool], str]:
    """A kind of `KINDS`, or `module:Class[|Class...]` (an instance of one of the classes, imported when an
    argument is checked), or `several module:Class...` (one or an iterable of them)."""
    if ":" not in kind:
        return KINDS[kind]
    several = kind.startswith("several ")
    module, _, name = kind.removeprefix("several ").partition(":")

    def instance(value: Any) -> bool:
        import importlib

        return isinstance(value, tuple(getattr(importlib.import_module(module), n) for n in name.split("|")))
    what = " or ".join(f"a {n}" for n in name.split("|"))
    return (_several(instance), f"{what}, or an iterable of them") if several else (instance, what)


def checked(**kinds: str) -> Callable[[F], F]:
    """Check the named arguments of an API function by kind (`KINDS`) before it runs (ArgumentError)."""
    tests = {}
    for name, kind in kinds.items():
        optional = kind.startswith("optional ")
        test, what = _kind(kind.removeprefix("optional "))
        tests[name] = (_optional(test) if optional else test, what + (" or None" if optional else ""))

    def decorate(function: F) -> F:
        signature = inspect.signature(function)
        unknown = set(tests) - set(signature.parameters)
        assert not unknown, f"{function.__name__} has no argument {', '.join(sorted(unknown))}"

        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError as exc:
                raise ArgumentError(function.__name__, str(exc)) from None
            for name, value in bound.arguments.items():
                if name not in tests:
                    continue
                if isinstance(value, Iterator):  # checked and then passed on: kept as read
                    value = bound.arguments[name] = tuple(value)
                if not tests[name][0](value):
                    raise ArgumentError(name, f"{tests[name][1]}, not {_shown(value)}")
            return function(*bound.args, **bound.kwargs)
        return wrapper  # type: ignore[return-value]
    return decorate


def _shown(value: Any) -> str:
    """A wrong value as a message shows it: short, with its type."""
    from ckast.config.errors import shorten

    text = shorten(repr(value))
    plain = value is None or isinstance(value, (bool, int, float, str))
    return text if plain else f"{text} ({type(value).__name__})"
