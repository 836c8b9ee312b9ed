"""The automation above the door: the keeper (places kept at all times), the rules at work
(each round decides open letters and asks the door for jobs) and the periodic work of the
beat schedule (check, discover, sample, resume stale jobs, expire unapproved ones)."""
