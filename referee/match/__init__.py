"""One match at one table: its configuration, clock, fault policy, seating, slots and runner."""
