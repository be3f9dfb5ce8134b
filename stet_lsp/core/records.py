"""Records: plain classes whose fields are their `__slots__`, compared and shown by value.

The style sheet's classes are records rather than dataclasses because the command line
loads them at every start, and the dataclasses module (with inspect, ast and dis) and the
code it generates for each class cost more than the rest of a short command."""

from __future__ import annotations


class Record:
    """Equal to a record of the same class with equal fields; unhashable, as it may change."""

    __slots__: tuple[str, ...] = ()

    def _values(self) -> tuple[object, ...]:
        return tuple([getattr(self, name) for name in self.__slots__])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Record) or other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{self.__class__.__qualname__}({fields})"


class FrozenRecord(Record):
    """A record whose fields never change (they are declared Final): hashable by value."""

    __slots__ = ()

    def __hash__(self) -> int:
        return hash(self._values())
