"""A digest from picks to posted messages: composing, the backlog, exactly-once steps."""
