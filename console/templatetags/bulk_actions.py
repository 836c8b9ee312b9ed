"""``{% bulk_action_form place as form %}``: the action form a place's page includes, and
``{% letter_actions letter as kinds %}``: the same actions a letter's page offers for it alone.

Tags, so the form and the actions it offers come from the acting side (the preview view
validates with the same form) whatever context the including page has.
"""

from __future__ import annotations

from django import template

from console.jobs.kinds import JobKind
from console.jobs.kinds.base import LETTER
from console.models import DeadLetter, DeadPlace
from console.web.action_forms import BulkActionForm
from console.web.views.actions import move_targets, offered_actions

register = template.Library()


@register.simple_tag(takes_context=True)
def bulk_action_form(context, place: DeadPlace) -> BulkActionForm:
    """An empty action form offering what the place's adapter can do and the user's role allows."""
    return BulkActionForm(offered=offered_actions(place, context["request"].user))


@register.simple_tag(takes_context=True)
def letter_actions(context, letter: DeadLetter) -> list[JobKind]:
    """The actions on a selection of letters that a letter's page offers for that letter alone
    (they go through the same preview and confirm)."""
    return [each for each in offered_actions(letter.place, context["request"].user) if LETTER in each.offered_on]


@register.simple_tag(takes_context=True)
def bulk_move_targets(context, place: DeadPlace) -> list[str]:
    """Queue names suggested for a move from this place, from what the user may see."""
    return move_targets(place, context["request"].user)
