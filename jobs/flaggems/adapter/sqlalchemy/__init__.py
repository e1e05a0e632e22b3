"""A stand-in for SQLAlchemy, for FlagGems only (jobs/flaggems/README.md).

FlagGems imports SQLAlchemy when it loads (flag_gems/utils/models/sql.py): its autotuners keep
the configurations they chose in an SQLite file under ~/.flaggems. Where SQLAlchemy is not
installed, this package stands in for the few parts FlagGems uses, keeping the tables in the
process's memory: a configuration tuned once is reused by the same executor, and nothing is
written under the home folder. Where a real SQLAlchemy is installed anywhere else on sys.path,
that one is loaded instead and this package steps aside.
"""
import importlib.machinery
import importlib.util
import os
import sys


def _real_sqlalchemy():
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    others = [p for p in sys.path if os.path.abspath(p or ".") != here]
    return importlib.machinery.PathFinder.find_spec("sqlalchemy", others)


_spec = _real_sqlalchemy()
if _spec is not None:
    # The import system returns whatever sys.modules holds under the name once this module's
    # code has run: the real package, fully loaded.
    _module = importlib.util.module_from_spec(_spec)
    sys.modules["sqlalchemy"] = _module
    _spec.loader.exec_module(_module)
else:
    from . import engine, exc, orm, schema  # noqa: F401
    from .engine import create_engine  # noqa: F401
    from .types import BigInteger, Boolean, Float, String, Text  # noqa: F401

    STANDIN = True

    def inspect(obj):
        """What sql.py reads of a row: inspect(row).mapper.columns, each with .key."""
        class _Mapper:
            columns = type(obj).__table__.columns

        class _State:
            mapper = _Mapper

        return _State
