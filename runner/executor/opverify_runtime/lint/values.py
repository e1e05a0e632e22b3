"""The values the branches' constants take (branches.py): literals, and the few objects a static
reading knows more of than "unknown": a tl.constexpr, a function's forwarded `**kwargs`, an enum
member, an object of a known kind (a new tensor, a set, a logger), and how they compare."""
import ast

UNKNOWN = object()


class Constexpr:
    """A tl.constexpr(value) seen statically: compares as its value, `.value` is the value."""

    def __init__(self, value):
        self.value = value

    def __eq__(self, other):
        return isinstance(other, Constexpr) and _same(self.value, other.value)

    def __hash__(self):
        return hash(("constexpr", type(self.value).__name__, self.value))


class Keywords:
    """A function's `**kwargs` as the call bound it, each keyword known (or none). Only bound
    where the function reads it and forwards it (`kwargs.get(k, d)`, `f(**kwargs)`), so it stays
    what the call passed (calls.py)."""

    def __init__(self, items):
        self.items = tuple(sorted(items))

    def get(self, key, default=None):
        return dict(self.items).get(key, default)

    def __bool__(self):
        return bool(self.items)

    def __eq__(self, other):
        return isinstance(other, Keywords) and self.items == other.items

    def __hash__(self):
        return hash(("keywords", self.items))


class Opaque:
    """An object of a known kind and nothing more: what a tensor factory just returned
    (`torch.empty_like(x)` passed for `start_loc=None`), a set, list or dict built there, a
    logger. Known not to be None (and, but for "tensor", not to be a tensor); its truth,
    equality and contents are unknown."""

    def __init__(self, what):
        self.what = what

    def __repr__(self):
        return f"<a {self.what}>"


OPAQUE_CALLS = {"torch." + name: "tensor" for name in (
    "empty", "empty_like", "empty_strided", "empty_permuted", "zeros", "zeros_like", "ones", "ones_like", "full",
    "full_like", "tensor", "as_tensor", "arange")}
OPAQUE_CALLS.update({"builtins.set": "set", "builtins.frozenset": "set", "builtins.list": "list",
                     "builtins.sorted": "list", "builtins.dict": "dict", "collections.OrderedDict": "dict",
                     "collections.defaultdict": "dict", "collections.deque": "list", "collections.Counter": "dict",
                     "logging.getLogger": "logger", "re.compile": "pattern"})
OPAQUE = {what: Opaque(what) for what in set(OPAQUE_CALLS.values())}
CONTAINERS = {ast.List: "list", ast.ListComp: "list", ast.Set: "set", ast.SetComp: "set", ast.Dict: "dict",
              ast.DictComp: "dict"}


class EnumMember:
    """A member of an enum class the lint read (`Policy.NONE`): `value` its literal value, or
    UNKNOWN (`auto()`); `plain` for an Enum/Flag, whose members equal nothing but themselves
    and their aliases, against an IntEnum/StrEnum/IntFlag, whose members equal their values."""

    def __init__(self, cls, name, value, plain):
        self.cls, self.name, self.value, self.plain = cls, name, value, plain

    def __eq__(self, other):  # the same member (for contexts and merges; tests use _equal)
        return isinstance(other, EnumMember) and other.cls is self.cls and other.name == self.name

    def __hash__(self):
        return hash(("enum", id(self.cls), self.name))


def _equal(a, b):
    """a == b of two known values, or UNKNOWN where an enum member's value decides it unseen."""
    if not isinstance(a, EnumMember):
        a, b = b, a
    if not isinstance(a, EnumMember):
        return a == b
    if isinstance(b, EnumMember) and b.cls is a.cls and b.name == a.name:
        return True
    if isinstance(b, EnumMember) and b.cls is a.cls and a.value is UNKNOWN and b.value is UNKNOWN:
        return False  # two auto() members: auto() counts on, it gives no alias of another auto()
    if isinstance(b, EnumMember) and b.cls is a.cls or not a.plain:
        # aliases share a value; an IntEnum member equals its value (and other classes' members of it)
        other = b.value if isinstance(b, EnumMember) else b
        if a.value is UNKNOWN or other is UNKNOWN or isinstance(b, EnumMember) and b.plain:
            return UNKNOWN
        return a.value == other
    return False  # a plain Enum member against anything else


def _same(a, b):
    return type(a) is type(b) and a == b


def _plain(value):
    return value.value if isinstance(value, Constexpr) else value


def context_key(bound):
    """A hashable, type-exact key of {param: value}."""
    return tuple(sorted(((p, type(v).__name__, v) for p, v in bound.items()), key=lambda item: (item[0], item[1])))
