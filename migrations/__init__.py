"""advisor's Alembic migrations (env.py + versions/), shipped with the package.

advisor runs them itself (`advisor db upgrade`, or automatically on a new database); see
`advisor.db.schema`. To write a new revision from a checkout, against a scratch database at
head::

    alembic -c migrations/alembic.ini -x db=sqlite:///scratch.db revision --autogenerate -m "..."

then edit it by hand (revisions never import the models: they describe the schema as it was).
"""

ADVISOR_MIGRATIONS = True
