"""Column types: only their names matter to the stand-in's in-memory tables."""


class _Type:
    def __init__(self, *args, **kwargs):
        self.args = args


class String(_Type):
    pass


class Text(_Type):
    pass


class Boolean(_Type):
    pass


class BigInteger(_Type):
    pass


class Float(_Type):
    pass
