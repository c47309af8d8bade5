"""Alembic environment: runs migrations on the engine handed over by digest.store.database."""

from alembic import context

from digest.store.schema import Base

config = context.config
engine = config.attributes["connection_engine"]

with engine.begin() as connection:
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        render_as_batch=connection.dialect.name == "sqlite",
    )
    context.run_migrations()
