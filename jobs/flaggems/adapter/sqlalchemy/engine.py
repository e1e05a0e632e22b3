"""create_engine: an engine whose "database" is a dict of tables in memory."""
import contextlib


class Engine:
    def __init__(self, url):
        self.url = url
        self.tables = {}  # table name -> model class (orm.DeclarativeBase subclass)

    @contextlib.contextmanager
    def begin(self):
        yield Connection(self)


class Connection:
    def __init__(self, engine):
        self.engine = engine

    def execute(self, statement, *args, **kwargs):
        create = getattr(statement, "create_in", None)
        if create is not None:
            create(self.engine)


def create_engine(url, *args, **kwargs):
    return Engine(url)
