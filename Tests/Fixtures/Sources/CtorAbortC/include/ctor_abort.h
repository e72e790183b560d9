int plugboard_fixture_ctor_abort_linked(void);
