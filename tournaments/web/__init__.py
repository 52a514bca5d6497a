"""Tavolo on the web: the static tournament report, the replay viewer and the live view."""
