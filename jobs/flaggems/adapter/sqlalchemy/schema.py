class CreateTable:
    """CREATE TABLE [IF NOT EXISTS]: registers the model's table with the engine."""

    def __init__(self, table, if_not_exists=False):
        self.table = table

    def create_in(self, engine):
        engine.tables.setdefault(self.table.name, self.table.model)
