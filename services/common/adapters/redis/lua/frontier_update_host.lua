-- ARGV[A..]: now, release (1/0), then field, value pairs to set (robots_txt among them
-- goes to its own key). One host.
return update_host(1, tonumber(ARGV[A]), ARGV[A + 1] == '1', A + 2)
