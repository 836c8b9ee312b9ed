"""The engines that move letters: capture reads them off a broker into custody, publish
(with senders and returns) puts them back or elsewhere, shovel moves a queue server-side or
through the console, local changes only the console's own rows; spares serves them (and
console.brokers.batch_sizing sizes their batches). A job kind (console.jobs.kinds) runs one of
them; they know nothing of the door."""
