"""Moving a deployment's user data between databases: one JSON document out, the same in."""
