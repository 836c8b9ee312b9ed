"""The kinds of notification channel, one module each behind the registry
(console.notifications.registry): adding a kind is adding a module here and one registry line.
Their contract is console.notifications.kinds.base."""
