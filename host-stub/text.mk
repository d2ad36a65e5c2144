# host-stub/text.mk -- the program text form (assembler + disassembler): a PIC convenience library for the host library and the CLI.
#
# Link it *together with* abi/libvyre-format.la, which it uses: it does not
# carry its own copy of the format library, because a shared library that
# linked both convenience libraries would then get every vyre_program_* /
# vyre_builder_* symbol twice ("multiple definition" at link time).
noinst_LTLIBRARIES += host-stub/libvyre-text.la
host_stub_libvyre_text_la_SOURCES = host-stub/text.c host-stub/text_asm.c host-stub/text_internal.h \
	host-stub/include/vyre/vyre_text.h
EXTRA_DIST += docs/program-text.md
