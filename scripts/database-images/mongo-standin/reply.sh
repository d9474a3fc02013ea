#!/bin/sh
# What platform-test/db-mongo-standin:8 answers on each connection (its stdout is the socket).
echo "platform-test mongo stand-in: not a MongoDB server"
