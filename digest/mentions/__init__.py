"""The colleague who should read it: members opted in on a channel are mentioned on the pick of
its digest that best fits their own personal digest (docs/mentions.md)."""
