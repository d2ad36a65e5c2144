# tests/ref.mk -- (empty until its part lands)
