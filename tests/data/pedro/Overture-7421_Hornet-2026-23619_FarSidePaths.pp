{
  "startPoint": {
    "x": 56,
    "y": 8,
    "heading": "linear",
    "startDeg": 90,
    "endDeg": 180
  },
  "lines": [
    {
      "name": "Path 1",
      "endPoint": {
        "x": 56.985781990521325,
        "y": 14.672985781990521,
        "heading": "linear",
        "startDeg": 90,
        "endDeg": 100
      },
      "controlPoints": [],
      "color": "#BA6AD6",
      "id": "line-b16rtgkzp4q",
      "waitBeforeMs": 0,
      "waitAfterMs": 0,
      "waitBeforeName": "",
      "waitAfterName": ""
    },
    {
      "name": "Path 2",
      "endPoint": {
        "x": 9.04265402843602,
        "y": 8.872037914691955,
        "heading": "tangential",
        "reverse": false,
        "startDeg": 100,
        "endDeg": 180
      },
      "controlPoints": [],
      "color": "#B5D86D",
      "id": "line-9muzbiulwf7",
      "waitBeforeMs": 0,
      "waitAfterMs": 0,
      "waitBeforeName": "",
      "waitAfterName": "",
      "locked": false
    },
    {
      "name": "Path 3",
      "endPoint": {
        "x": 56.31625525033132,
        "y": 16.294243166146323,
        "heading": "linear",
        "reverse": false,
        "startDeg": 180,
        "endDeg": 110
      },
      "controlPoints": [],
      "color": "#98D6D9",
      "id": "line-o1opw9i9wth",
      "waitBeforeMs": 0,
      "waitAfterMs": 0,
      "waitBeforeName": "",
      "waitAfterName": "",
      "locked": false
    },
    {
      "name": "Path 4",
      "endPoint": {
        "x": 35.16499091996279,
        "y": 11.717234353545647,
        "heading": "linear",
        "reverse": false,
        "startDeg": 110,
        "endDeg": 90
      },
      "controlPoints": [],
      "color": "#7A77D8",
      "id": "line-ld1xy37pdme",
      "waitBeforeMs": 0,
      "waitAfterMs": 0,
      "waitBeforeName": "",
      "waitAfterName": "",
      "locked": true
    },
    {
      "id": "mkg4qc7u-j6pcd2",
      "name": "Path 5",
      "endPoint": {
        "x": 17.445497630331754,
        "y": 34.445497630331765,
        "heading": "linear",
        "reverse": false,
        "startDeg": 90,
        "endDeg": 180
      },
      "controlPoints": [
        {
          "x": 70.00666607609512,
          "y": 12.868095849758623
        },
        {
          "x": 62.964012047659125,
          "y": 36.6595650440714
        }
      ],
      "color": "#759D68",
      "waitBeforeMs": 0,
      "waitAfterMs": 0,
      "waitBeforeName": "",
      "waitAfterName": "",
      "locked": true
    },
    {
      "id": "line-15mdwew1i79j",
      "endPoint": {
        "x": 57.838862559241704,
        "y": 17.91469194312796,
        "heading": "linear",
        "reverse": false,
        "startDeg": 180,
        "endDeg": 110
      },
      "controlPoints": [],
      "color": "#A68688",
      "locked": true,
      "waitBeforeMs": 0,
      "waitAfterMs": 0,
      "waitBeforeName": "",
      "waitAfterName": "",
      "name": "Path 6"
    },
    {
      "id": "mkgbrg0t-gakz1j",
      "name": "Path 7",
      "endPoint": {
        "x": 17.437790671922745,
        "y": 57.59941533418964,
        "heading": "linear",
        "reverse": false,
        "startDeg": 110,
        "endDeg": 180
      },
      "controlPoints": [
        {
          "x": 60.99851618904196,
          "y": 61.69070292775832
        }
      ],
      "color": "#96A689",
      "waitBeforeMs": 0,
      "waitAfterMs": 0,
      "waitBeforeName": "",
      "waitAfterName": "",
      "locked": false
    },
    {
      "id": "line-ng181y8z0qh",
      "endPoint": {
        "x": 58.18009478672985,
        "y": 18.938388625592417,
        "heading": "linear",
        "reverse": false,
        "startDeg": 180,
        "endDeg": 110
      },
      "controlPoints": [],
      "color": "#5C5766",
      "locked": true,
      "waitBeforeMs": 0,
      "waitAfterMs": 0,
      "waitBeforeName": "",
      "waitAfterName": "",
      "name": "Path8"
    },
    {
      "id": "line-vt4kvptksp",
      "endPoint": {
        "x": 36.682464454976305,
        "y": 17.232227488151665,
        "heading": "constant",
        "reverse": false,
        "degrees": 110
      },
      "controlPoints": [],
      "color": "#67D6D8",
      "locked": true,
      "waitBeforeMs": 0,
      "waitAfterMs": 0,
      "waitBeforeName": "",
      "waitAfterName": "",
      "name": "Path9"
    }
  ],
  "shapes": [],
  "sequence": [
    {
      "kind": "path",
      "lineId": "line-b16rtgkzp4q"
    },
    {
      "kind": "path",
      "lineId": "line-9muzbiulwf7"
    },
    {
      "kind": "path",
      "lineId": "line-o1opw9i9wth"
    },
    {
      "kind": "path",
      "lineId": "line-ld1xy37pdme"
    },
    {
      "kind": "path",
      "lineId": "mkg4qc7u-j6pcd2"
    },
    {
      "kind": "path",
      "lineId": "line-15mdwew1i79j"
    },
    {
      "kind": "path",
      "lineId": "mkgbrg0t-gakz1j"
    },
    {
      "kind": "path",
      "lineId": "line-ng181y8z0qh"
    },
    {
      "kind": "path",
      "lineId": "line-vt4kvptksp"
    }
  ],
  "settings": {
    "xVelocity": 75,
    "yVelocity": 65,
    "aVelocity": 3.141592653589793,
    "kFriction": 0.1,
    "rWidth": 17,
    "rHeight": 17,
    "safetyMargin": 1,
    "maxVelocity": 40,
    "maxAcceleration": 30,
    "maxDeceleration": 30,
    "fieldMap": "decode.webp",
    "robotImage": "/robot.png",
    "theme": "auto",
    "showGhostPaths": false,
    "showOnionLayers": false,
    "onionLayerSpacing": 3,
    "onionColor": "#dc2626",
    "onionNextPointOnly": false
  },
  "version": "1.2.1",
  "timestamp": "2026-02-04T16:24:45.786Z"
}