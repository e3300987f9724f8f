# systemd/: units for running a job as services. The *.in files name @BINDIR@ and @SYSCONFDIR@;
# `make install` renders them into $(DESTDIR)$(UNITDIR) next to the installed programs, which
# all carry one prefix (avclip-trainer, avclip-eval, ...): a bare `eval` would be shadowed by
# the shell builtin, and the prefix keeps them together in $(BINDIR). avclip-launch finds its
# siblings there. Everything goes under PREFIX (GNU's sysconfdir = PREFIX/etc; systemd reads
# units from /usr/local/lib/systemd/system too) unless SYSCONFDIR or UNITDIR say otherwise,
# e.g. `sudo make install SYSCONFDIR=/etc UNITDIR=/etc/systemd/system`.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
SYSCONFDIR ?= $(PREFIX)/etc
UNITDIR ?= $(PREFIX)/lib/systemd/system
SYSTEMD_UNITS_IN := $(wildcard systemd/*.service.in)
INSTALL_PROGS := tools/ringctl tools/ringstat loaderd/loaderd trainer/trainer tools/prep tools/synth tools/eval tools/clipdump \
                 tools/plot tools/export

SCRIPT_TESTS += tests/test_systemd_units.sh tests/test_install.sh tests/test_install_prefix.sh

.PHONY: install install-systemd
install: all install-systemd
	install -d $(DESTDIR)$(BINDIR)
	for p in $(INSTALL_PROGS); do [ ! -x $$p ] || install -m 755 $$p $(DESTDIR)$(BINDIR)/avclip-$$(basename $$p); done
	install -m 755 tools/launch.sh $(DESTDIR)$(BINDIR)/avclip-launch

install-systemd:
	install -d $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSCONFDIR)/avclip
	for u in $(SYSTEMD_UNITS_IN); do \
	  sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' $$u > $(DESTDIR)$(UNITDIR)/$$(basename $$u .in); done
	install -m 644 systemd/avclip.target $(DESTDIR)$(UNITDIR)/
	for n in $$(ls -d /sys/devices/system/node/node[0-9]* 2>/dev/null | sed 's|.*node||'); do \
	  bash systemd/numa-dropin.sh $$n $(DESTDIR)$(UNITDIR); done
	[ -e $(DESTDIR)$(SYSCONFDIR)/avclip/avclip.env ] || install -m 644 systemd/avclip.env.example $(DESTDIR)$(SYSCONFDIR)/avclip/avclip.env
