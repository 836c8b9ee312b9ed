"""``{% bulk_action_form place as form %}``: the action form a page of letters includes (a
place's, or with no place a page across places), ``{% letter_action_form letter as form %}``
the one a letter's page offers for that letter alone, and ``{% letter_actions letter as kinds %}``
the kinds it offers.

Tags, so the form and the actions it offers come from the acting side (the preview view
validates with the same form) whatever context the including page has.
"""

from __future__ import annotations

from django import template

from console.access.scope import visible
from console.jobs.kinds import JobKind
from console.jobs.kinds.base import LETTER
from console.models import DeadLetter, DeadPlace
from console.web.action_forms import BulkActionForm
from console.web.views.actions import move_targets, offered_across, offered_actions

register = template.Library()


@register.simple_tag(takes_context=True)
def bulk_action_form(context, place: DeadPlace | None) -> BulkActionForm:
    """An empty action form offering what the place's adapter (across places: every adapter of
    the places the user may see) can do and the user's role allows."""
    user = context["request"].user
    if not place:
        return BulkActionForm(offered=offered_across(visible(user, DeadPlace.objects.all()), user))
    return BulkActionForm(offered=offered_actions(place, user))


@register.simple_tag(takes_context=True)
def letter_action_form(context, letter: DeadLetter) -> BulkActionForm:
    """An empty action form offering the letter's page's actions (:func:`letter_actions`)."""
    return BulkActionForm(offered=letter_actions(context, letter))


@register.simple_tag(takes_context=True)
def letter_actions(context, letter: DeadLetter) -> list[JobKind]:
    """The actions on a selection of letters that a letter's page offers for that letter alone
    (they go through the same preview and confirm)."""
    return [each for each in offered_actions(letter.place, context["request"].user) if LETTER in each.offered_on]


@register.simple_tag(takes_context=True)
def bulk_move_targets(context, place: DeadPlace | None) -> list[str]:
    """Queue names suggested for a move from this place (or across places), from what the user may see."""
    return move_targets(place or None, context["request"].user)
