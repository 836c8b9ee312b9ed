"""Access control: roles (viewer, operator, admin), the table of which URL needs which
permission, scopes limiting users to some brokers or places, and redaction of letter content.

- ``roles``: the permissions, the three roles, and keeping their groups in the database.
- ``policy``: every URL name -> the permission it needs (unknown names are refused).
- ``middleware`` / ``api``: apply the policy to pages and to the REST API, in one place each.
- ``scope``: what a scoped user may see and act on.
- ``redaction``: masking bodies and headers for viewers and in exports.
- ``logsafe``: no broker password or URL credentials in any log line.
"""
