// The person's page: the only script, served from the page itself (the Content-Security-Policy
// allows no other). It replaces the questions list as the server sends it, counts how long each
// question has waited, and shows a browser notification for a new question when the person
// asked for them. Everything else is plain links and forms, which work without it.
'use strict';

(function () {
  var list = document.getElementById('questions');
  if (!list) {
    return;
  }
  var known = ids();
  var baseTitle = document.title.replace(/^\(\d+\) /, '');

  function ids() {
    var found = {};
    list.querySelectorAll('[data-id]').forEach(function (el) {
      found[el.getAttribute('data-id')] = el.getAttribute('data-question');
    });
    return found;
  }

  // The same words as the server's: "12 s", "3 min 5 s", "2 h 10 min".
  function waited(seconds) {
    if (seconds < 60) return seconds + ' s';
    if (seconds < 3600) return Math.floor(seconds / 60) + ' min ' + (seconds % 60) + ' s';
    return Math.floor(seconds / 3600) + ' h ' + Math.floor((seconds % 3600) / 60) + ' min';
  }

  function tick() {
    list.querySelectorAll('.waited[data-since]').forEach(function (el) {
      var since = Date.parse(el.getAttribute('data-since'));
      if (!isNaN(since)) {
        el.textContent = waited(Math.max(0, Math.floor((Date.now() - since) / 1000)));
      }
    });
  }

  function notifyNew(now) {
    if (!('Notification' in window) || Notification.permission !== 'granted') return;
    Object.keys(now).forEach(function (id) {
      if (!(id in known)) {
        new Notification('phonelogs: an agent is asking', { body: now[id], tag: id });
      }
    });
  }

  var events = new EventSource('events');
  events.addEventListener('questions', function (event) {
    // The server escaped every text in this fragment; it is the same HTML the page started with.
    var template = document.createElement('template');
    template.innerHTML = event.data;
    list.replaceChildren(template.content);
    var now = ids();
    notifyNew(now);
    known = now;
    var count = Object.keys(now).length;
    document.title = (count ? '(' + count + ') ' : '') + baseTitle;
    list.setAttribute('data-updated', String(Date.now()));
    tick();
  });

  var button = document.getElementById('notify');
  if (button && 'Notification' in window && Notification.permission === 'default') {
    button.hidden = false;
    button.addEventListener('click', function () {
      Notification.requestPermission().then(function () {
        button.hidden = true;
      });
    });
  }
  setInterval(tick, 1000);
})();
