# host-stub/text.mk -- (empty until its part lands)
