"""Sensors, schedules and jobs of the code location."""
