"""Declarative models and sessions over the engine's in-memory tables."""


class Mapped:
    def __class_getitem__(cls, item):
        return cls


class MappedColumn:
    def __init__(self, type_=None, primary_key=False, **kwargs):
        self.type = type_
        self.primary_key = primary_key
        self.key = None


def mapped_column(type_=None, *args, primary_key=False, **kwargs):
    return MappedColumn(type_, primary_key=primary_key)


class Table:
    def __init__(self, name, columns, model):
        self.name = name
        self.columns = columns
        self.model = model


class DeclarativeBase:
    """A model class's columns are its MappedColumn attributes; its rows live on the class,
    keyed by the primary-key values."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        columns = []
        for key, value in list(vars(cls).items()):
            if isinstance(value, MappedColumn):
                value.key = key
                columns.append(value)
        cls.__table__ = Table(getattr(cls, "__tablename__", cls.__name__), columns, cls)
        cls._rows = {}

    def __init__(self, **values):
        for key, value in values.items():
            setattr(self, key, value)

    @classmethod
    def _key(cls, values):
        return tuple(values.get(c.key) for c in cls.__table__.columns if c.primary_key)


class Session:
    def __init__(self, bind=None, *args, **kwargs):
        self.bind = bind
        self._pending = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._pending = []
        return False

    def get(self, model, key):
        return model._rows.get(model._key(dict(key)))

    def add(self, obj):
        self._pending.append(obj)

    def commit(self):
        for obj in self._pending:
            model = type(obj)
            model._rows.setdefault(model._key(vars(obj)), obj)
        self._pending = []

    def rollback(self):
        self._pending = []

    def close(self):
        self._pending = []
