"""Slack adapter: Block Kit rendering, posting through the Web API, and Bolt listeners."""
