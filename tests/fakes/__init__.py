"""Strict local fakes of the platforms and services the bot talks to."""
