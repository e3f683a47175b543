"""The dashboard's pages, one file each, run by st.navigation in dashboard/app.py."""
