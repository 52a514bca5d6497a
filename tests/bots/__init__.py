"""Small scripted bot programs the referee tests start through ``cmd:`` entries."""
