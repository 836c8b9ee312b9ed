"""The demo that `manage.py demo` sets up: a shop's orders failing in billing and shipping.

catalogue.py says which messages exist and where each fails; rabbitmq.py makes them die for
real on a local RabbitMQ; memory.py stores the same letters directly when there is none.
"""
