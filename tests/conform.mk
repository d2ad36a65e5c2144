# tests/conform.mk -- (empty until its part lands)
