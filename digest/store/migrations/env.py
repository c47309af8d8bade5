"""Alembic environment: runs migrations on the engine handed over by digest.store.database."""

from alembic import context

from digest.store.schema import Base

config = context.config
engine = config.attributes["connection_engine"]

with engine.connect() as connection:
    sqlite = connection.dialect.name == "sqlite"
    if sqlite:
        # Batch mode rebuilds a SQLite table by copying it and dropping the old one; with foreign
        # keys on, that drop cascades and deletes every row referring to it (a channel's votes,
        # subscriptions, deliveries). SQLite ignores this pragma inside a transaction: it is set
        # before the migrations' transaction begins, and set back after.
        connection.exec_driver_sql("PRAGMA foreign_keys=OFF")
        connection.commit()
    try:
        with connection.begin():
            context.configure(
                connection=connection, target_metadata=Base.metadata, render_as_batch=sqlite
            )
            context.run_migrations()
    finally:
        if sqlite:
            connection.exec_driver_sql("PRAGMA foreign_keys=ON")
            connection.commit()
