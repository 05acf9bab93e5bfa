package cli

import (
	"os"
	"strconv"
)

func qlogEnv() string { return os.Getenv("QLOGDIR") }

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) }
