# host-stub/ref.mk -- (empty until its part lands)
