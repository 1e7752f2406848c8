# joules-train links GSL (and its CBLAS) for the fit.
joules_train_CFLAGS := $(shell pkg-config --cflags gsl)
joules_train_LDLIBS := $(shell pkg-config --libs gsl)
