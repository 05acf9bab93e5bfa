package main

import "syscall"

var syscallSIGHUP = syscall.SIGHUP
