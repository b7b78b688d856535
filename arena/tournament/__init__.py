"""Tournaments: schedules, runs, standings and ratings."""
