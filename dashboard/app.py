"""advisor's dashboard: navigation only. Start it with `advisor dashboard [--db URL]`.

The pages are in views/ (a folder named pages/ would make Streamlit treat this as an old-style
multipage app on its first run; see dashboard/__init__.py).
"""

import gc
import sys
from pathlib import Path

import streamlit as st

# `streamlit run dashboard/app.py` puts dashboard/ on sys.path; the pages import `dashboard.*`.
ROOT = str(Path(__file__).resolve().parent.parent)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

if not gc.get_freeze_count():
    # Once per process: import what the pages use and keep it out of the garbage collector's
    # full passes, which would otherwise walk all of it (pandas, Altair's Vega-Lite schema,
    # SQLAlchemy: ~0.15 s a pass) during page runs and after each one.
    import dashboard.ui  # noqa: F401

    gc.freeze()

# No icons on the pages, nor a page_icon: Streamlit shows the current page's icon as the
# favicon, and fetches a Material icon's favicon from fonts.gstatic.com. The dashboard must work
# air-gapped (the icons inside pages come from the font Streamlit serves itself).
# Navigation at the top and the sidebar (the database line, Refresh) folded away: a table of a
# fleet's recommendations needs the page's whole width at 1440 px.
st.set_page_config(page_title="advisor", layout="wide", initial_sidebar_state="collapsed")
PAGES = [
    st.Page("views/recommendations.py", title="Recommendations", default=True),
    st.Page("views/workload.py", title="Workload"),
    st.Page("views/fleet.py", title="Fleet"),
    st.Page("views/sweeps.py", title="Sweeps"),
]
st.navigation(PAGES, position="top").run()
