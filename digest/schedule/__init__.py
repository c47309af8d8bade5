"""When digests go out: schedules, time zones, due times, the scheduler tick's use cases."""
