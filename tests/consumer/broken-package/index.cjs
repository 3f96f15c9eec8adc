exports.hello = function hello() {
  return "hello";
};
