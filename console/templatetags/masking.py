"""``|plain``: the marker of a template variable declared safe from masking (its value is made
by code). Every other variable of our templates is masked by console.access.template_masking;
``shown`` is registered too, so a template may name it, though the loader adds it anyway."""

from __future__ import annotations

from django import template

from console.access.template_masking import plain, shown

register = template.Library()
register.filter("plain", plain, is_safe=True)
register.filter("shown", shown, is_safe=False)
