"""advisor's Streamlit dashboard: app.py (navigation), views/ (one file per page, UI only),
data.py (cached reads through the store), analysis.py (the arithmetic), ui.py (shared UI).
Started by `advisor dashboard`.

The pages live in views/, not pages/: Streamlit runs a script that has a pages/ folder beside it
as an old-style multipage app until st.navigation has run once, and a browser may then keep
that automatic page list (one entry per file) instead of the app's own.
"""
