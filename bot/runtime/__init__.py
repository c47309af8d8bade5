"""What runs the bot: the scheduler, the delivery runner, group commit, senders, workers."""
