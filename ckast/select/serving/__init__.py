"""Which problems a library serves: the applicability conditions (`applicability`), a problem's own validity
(`validity`), reading problems from the command line and files (`problem_read`) and the library a selection ranks
(`library`)."""
